//! CDNA words (gfx90a, gfx94): GCN's encodings. The SOP* and VOP1/VOP2/VOPC
//! words have gfx11's layouts; VOP3 (0xD0, a 10-bit opcode space holding
//! VOPC, VOP2, VOP1, the VOP3-only ops and, from 0x380, VOP3P and
//! VOP3P-MAI) keeps gfx11's field positions under another prefix; SMEM
//! (0xC0) and the memory words ([`super::gfx9_mem`]) have GCN's own field
//! positions. Scalar register codes are turned into gfx11's numbering
//! ([`gfx9_sregs`]: gfx9's m0 is 124 and, as llvm-mc-19 reads it, null
//! 125), AccVGPRs into `Vgpr(AGPR_BASE + n)`. Where llvm-mc-19 refuses a
//! word (a modifier the op lacks, a field of an absent source, a
//! misaligned special-register tuple), so does this decoder: the oracle
//! tests hold both to random words.

use super::{bit, bits, blank, sext, sreg_operand, Reader, Result};
use crate::{
    flags, mai, sreg, DecodeError, Format, Implicit, Inst, LaneSel, Op, Operand, Special, Ty,
    AGPR_BASE,
};

/// gfx9's scalar codes to gfx11's numbering, in every scalar operand: m0
/// is 124 and (as llvm-mc-19 decodes gfx9) null 125, gfx10's order.
pub(super) fn gfx9_sregs(i: &mut Inst) {
    super::gfx10::swap_m0_null(i);
}

/// llvm-mc reads a 64-bit (or wider) scalar operand from an aligned
/// register: it drops the low bits of an SGPR or ttmp code (to a pair, a
/// quad for four dwords and more) and refuses an odd special pair
/// (s[103:104], xnack_mask_hi:vcc_lo, …) and m0.
fn align_pairs(i: &mut Inst, word: u32) -> Result<()> {
    let info = i.op.info();
    let slots = i
        .dst
        .iter_mut()
        .zip(info.dst)
        .chain(i.src.iter_mut().zip(info.src));
    let smem = info.format == Format::Smem;
    for (k, (o, ty)) in slots.enumerate() {
        let dwords = if ty == Ty::Mask { 2 } else { ty.dwords() };
        if let Operand::Vgpr(n) = o {
            // A register tuple stays within its file.
            if (*n % AGPR_BASE) as u32 + dwords.max(1) as u32 > 256 {
                return Err(invalid(word, "gfx9 register tuple past v255"));
            }
        }
        // (SMEM's sbase, the first source, is aligned by its reader.)
        if smem && k == 2 {
            continue;
        }
        if ty == Ty::Mask && !matches!(o, Operand::Sgpr(_) | Operand::None) {
            return Err(invalid(word, "a gfx9 lane mask from no SGPRs"));
        }
        if *o == Operand::Special(Special::LdsDirect) && dwords >= 2 {
            return Err(invalid(word, "64-bit src_lds_direct"));
        }
        if let Operand::Sgpr(n) = o {
            *n = aligned(*n, dwords).ok_or(invalid(word, "misaligned gfx9 special registers"))?;
        }
    }
    Ok(())
}

/// Scalar code `n` (gfx9's numbering) as the first of `dwords` registers.
fn aligned(n: u8, dwords: u8) -> Option<u8> {
    let mask = match dwords {
        0 | 1 => return Some(n),
        _ if n == 125 => return Some(n), // null, of any width
        2 | 3 => !1,
        _ => !3,
    };
    let n = if n < 102 || (108..=123).contains(&n) {
        n & mask
    } else {
        n
    };
    // Three registers and more stay within the SGPRs (quads may end at
    // flat_scratch: s[100:103]) or the ttmps.
    let end = n as u32 + dwords as u32 - 1;
    if dwords >= 3 && n < 128 && !(end <= 103 || (n >= 108 && end <= 123)) {
        return None;
    }
    match n {
        128.. => Some(n), // constants
        0..=101 | 108..=123 => Some(n),
        124 => None,
        125 => Some(n),
        n if n % 2 == 1 => None,
        n => Some(n),
    }
}

fn invalid(word: u32, why: &'static str) -> DecodeError {
    DecodeError::Invalid { word, why }
}

/// Source codes gfx9's VOP3 forms do not have: gfx10's DPP8 (0xE9, 0xEA).
fn reserved_src(code: u32) -> bool {
    matches!(code, 0xE9 | 0xEA)
}

fn is_float(ty: Ty) -> bool {
    matches!(ty, Ty::F16 | Ty::BF16 | Ty::F32 | Ty::F64)
}

/// Whether an op's float-only source modifiers (neg/abs) sit on float
/// sources (v_cndmask_b32 and the dot products take them on any).
fn float_src(i: &Inst, k: usize) -> bool {
    let name = i.op.name();
    // (The table types v_cvt_f32_ubyteN's byte source as f32.)
    let byte = name.starts_with("v_cvt_f32_ubyte");
    (is_float(i.op.info().src[k]) && !byte) || name == "v_cndmask_b32" || name.starts_with("v_dot")
}

/// gfx9 has DPP on VOP1/VOP2 only, not on the K ops or v_pk_fmac_f16,
/// and neg/abs only where [`float_src`] allows them.
fn dpp_allowed(i: &Inst, vopc: bool) -> bool {
    let implicit = i.op.info().implicit;
    let k_op = implicit.has(Implicit::K_ADDEND) || implicit.has(Implicit::K_FACTOR);
    let mods = (0..2).all(|k| float_src(i, k) || (i.mods.neg | i.mods.abs) >> k & 1 == 0);
    !vopc && !k_op && i.op.name() != "v_pk_fmac_f16" && mods
}

/// The SDWA fields llvm-mc accepts for the op (`d`, the SDWA dword): neg
/// and abs on float sources, sext on integer ones, omod on a float
/// result, no src1 fields on VOP1, no select 7.
fn sdwa_fields_allowed(i: &Inst, w: u32, d: u32) -> Result<()> {
    let info = i.op.info();
    let vop1 = w >> 25 == 0x3F;
    let vopc = w >> 25 == 0x3E;
    // No SDWA form for ops with 64-bit sources, accumulating ones, the K ops or the
    // dot products.
    let wide = info.src.iter().any(|t| t.dwords() == 2);
    let implicit = info.implicit;
    let k_op = implicit.has(Implicit::K_ADDEND) || implicit.has(Implicit::K_FACTOR);
    let dot = info.name.starts_with("v_dot");
    let mut ok = !wide && !k_op && !dot && !implicit.has(Implicit::ACCUMULATES);
    ok &= !(vop1 && bits(d, 24, 8) != 0);
    // Select 7 names no part (llvm-mc-19 crashes on it).
    ok &= bits(d, 16, 3) != 7 && bits(d, 24, 3) != 7 && (vopc || bits(d, 8, 3) != 7);
    for k in 0..2 {
        let (sext, negabs) = (bit(d, 19 + 8 * k), bits(d, 20 + 8 * k, 2) != 0);
        // (v_ldexp_f16's exponent is an integer.)
        let ldexp = info.name == "v_ldexp_f16";
        let float = float_src(i, k as usize) && !(ldexp && k == 1);
        // A float source takes neg/abs, an integer one sext.
        ok &= if float { !sext } else { !negabs };
    }
    ok &= vopc || bits(d, 14, 2) == 0 || is_float(info.dst[0]);
    if ok {
        Ok(())
    } else {
        Err(invalid(w, "SDWA modifier the gfx9 op does not take"))
    }
}

/// The modifiers an all-integer VOP3-only op lacks (llvm-mc refuses
/// them): neg/abs on integer sources (but where llvm-mc ignores them:
/// 16-bit ops bar the compares and `legacy` mads, the conversions and
/// exponents) and
/// clamp on the 32-bit min/max/median and SAD ops.
fn vop3_mods_allowed(i: &Inst) -> bool {
    let info = i.op.info();
    let name = info.name;
    let native = i.op.encoding(i.family).map_or(info.format, |e| e.format);
    let any_float = info
        .src
        .iter()
        .chain(&info.dst)
        .any(|&t| is_float(t) || t == Ty::V2F16);
    // (16-bit ones have op_sel, and so take the modifier bits, ignored.)
    let any16 = info.src.iter().chain(&info.dst).any(|&t| t == Ty::B16);
    let int_only = native == Format::Vop3 && !any_float && !any16 && !name.starts_with("v_dot");
    let sd = info.dst[1] == Ty::Mask;
    // neg/abs on an integer source, unless the op takes them anyway.
    let legacy16 = matches!(name, "v_mad_legacy_i16" | "v_mad_legacy_u16");
    let vopc = info.format == Format::Vopc;
    let takes_any = (any16 && !legacy16 && !vopc)
        || [
            "v_ldexp_",
            "v_cvt_pk",
            "v_cvt_sr_",
            "v_trig_preop",
            "v_div_",
        ]
        .iter()
        .any(|p| name.starts_with(p));
    let int_mod = (0..3).any(|k| {
        let bitk = (i.mods.neg | if sd { 0 } else { i.mods.abs }) >> k & 1 != 0;
        bitk && !float_src(i, k) && info.src[k] != Ty::V2F16
    });
    if int_mod && !takes_any {
        return false;
    }
    let negabs = i.mods.neg != 0 || (!sd && i.mods.abs != 0);
    let no_clamp = ["v_min3_", "v_max3_", "v_med3_", "v_sad_", "v_msad_"];
    let clamp_32 = no_clamp.iter().any(|p| name.starts_with(p)) && !name.ends_with("16");
    let clamp_ok = !(int_only && clamp_32 && i.mods.clamp);
    !(int_only && negabs) && clamp_ok
}

/// llvm-mc refuses a VOP3/VOP3P word whose absent sources (or the src2
/// an accumulating op ties to its destination) have a nonzero code or a
/// neg/abs bit (VOP3B's abs field is its sdst).
fn unused_fields_clear(i: &Inst, w: u32, w1: u32) -> Result<()> {
    let info = i.op.info();
    let sd = info.dst[1] == Ty::Mask;
    for k in 0..3u32 {
        let absent = info.src[k as usize] == Ty::None
            || (k == 2 && info.implicit.has(Implicit::ACCUMULATES));
        let set = bits(w1, 9 * k, 9) != 0 || bit(w1, 29 + k) || (!sd && bit(w, 8 + k));
        if absent && set {
            return Err(invalid(w, "a field of an absent gfx9 VOP3 source is set"));
        }
    }
    Ok(())
}

/// An MFMA's A, B and C are no SGPRs, and A and B no constants
/// (llvm-mc refuses them); an SMFMAC has no blgp.
fn mai_operands_allowed(i: &Inst, w: u32) -> Result<()> {
    // (null, still gfx9's code 125 here, is allowed.)
    let scalar = |o: Operand| match o {
        Operand::Sgpr(n) => n != 125,
        o => o == Operand::Special(Special::LdsDirect),
    };
    let ab = (0..2).all(|k| !scalar(i.src[k]) && !matches!(i.src[k], Operand::Const(_)));
    // SMFMAC: no blgp; its index (src2) is a VGPR.
    let smfmac = i.op.name().starts_with("v_smfmac");
    let sparse_ok =
        !smfmac || (i.imm >> mai::BLGP_SHIFT == 0 && matches!(i.src[2], Operand::Vgpr(_)));
    if ab && !scalar(i.src[2]) && sparse_ok {
        Ok(())
    } else {
        Err(invalid(w, "gfx9 MAI operand"))
    }
}

/// The 16-bit VALU ops that clear the high half of their destination
/// VGPR on GFX9 (LLVM's `GCNSubtarget::zeroesHigh16BitsOfDest` for GFX9,
/// by gfx9 mnemonic: LLVM's `V_MAD_F16_e64`, `V_MAD_U16_e64`,
/// `V_MAD_I16_e64`, `V_FMA_F16_e64` and `V_DIV_FIXUP_F16_e64` are the
/// `_legacy` ops on gfx9). The op_sel forms (`v_mad_f16`, `v_fma_f16`,
/// …) and `v_mac_f16`/`v_madak_f16`/`v_madmk_f16`/`v_fmac_f16` keep it;
/// so does every op LLVM does not list (it never relies on those).
const ZEROES_HIGH16: &[Op] = &[
    Op::V_CVT_F16_F32,
    Op::V_CVT_F16_U16,
    Op::V_CVT_F16_I16,
    Op::V_RCP_F16,
    Op::V_RSQ_F16,
    Op::V_SQRT_F16,
    Op::V_LOG_F16,
    Op::V_EXP_F16,
    Op::V_SIN_F16,
    Op::V_COS_F16,
    Op::V_FLOOR_F16,
    Op::V_CEIL_F16,
    Op::V_TRUNC_F16,
    Op::V_RNDNE_F16,
    Op::V_FRACT_F16,
    Op::V_FREXP_MANT_F16,
    Op::V_FREXP_EXP_I16_F16,
    Op::V_LDEXP_F16,
    Op::V_LSHLREV_B16,
    Op::V_LSHRREV_B16,
    Op::V_ASHRREV_I16,
    Op::V_ADD_U16,
    Op::V_SUB_U16,
    Op::V_SUBREV_U16,
    Op::V_MUL_LO_U16,
    Op::V_ADD_F16,
    Op::V_SUB_F16,
    Op::V_SUBREV_F16,
    Op::V_MUL_F16,
    Op::V_MAX_F16,
    Op::V_MIN_F16,
    Op::V_MAX_U16,
    Op::V_MIN_U16,
    Op::V_MAX_I16,
    Op::V_MIN_I16,
    Op::V_MAD_LEGACY_F16,
    Op::V_MAD_LEGACY_U16,
    Op::V_MAD_LEGACY_I16,
    Op::V_FMA_LEGACY_F16,
    Op::V_DIV_FIXUP_LEGACY_F16,
];

/// Stamps the GCN VALU behaviours a shared handler reads as data:
/// [`flags::ZERO_HI16`] and [`flags::GCN_CROSS_LANE`].
fn gcn_valu_flags(i: &mut Inst) {
    if ZEROES_HIGH16.contains(&i.op) {
        i.flags |= flags::ZERO_HI16;
    }
    if matches!(i.lane_sel, LaneSel::Dpp16 { .. }) {
        i.flags |= flags::GCN_CROSS_LANE;
    }
}

impl Reader<'_> {
    /// One gfx90a or gfx94 instruction whose first word is `w0`.
    pub(super) fn gfx9(&mut self, w0: u32) -> Result<Inst> {
        let mut i = match w0 >> 26 {
            0b110110 => return self.ds9(w0),
            0b110111 => return self.flat9(w0),
            0b111000 => return self.mubuf9(w0),
            0b111010 => return self.mtbuf9(w0),
            0b111100 => return self.mimg9(w0),
            0b110100 if w0 >> 23 == 0x1A7 => self.vop3p9(w0)?,
            0b110100 => self.vop3_9(w0)?,
            0b110000 => self.smem9(w0)?,
            _ if w0 >> 31 == 0 => self.vop12c9(w0)?,
            _ if w0 >> 30 == 0b10 => self.salu9(w0)?,
            _ => {
                return Err(DecodeError::UnknownOpcode {
                    format: "gfx9",
                    opcode: w0 >> 26,
                    word: w0,
                })
            }
        };
        align_pairs(&mut i, w0)?;
        gfx9_sregs(&mut i);
        gcn_valu_flags(&mut i);
        Ok(i)
    }

    /// The scalar ALU words: gfx11's layouts. gfx9's own operand forms:
    /// `s_cbranch_g_fork` and `s_rfe_restore_b64` read both source fields
    /// and write nothing; `s_set_gpr_idx_on`'s src1 field is a mode mask.
    fn salu9(&mut self, w: u32) -> Result<Inst> {
        // src_lds_direct is a VALU source only (SOPP and SOPK have none).
        let (sop1, sopc) = (w >> 23 == 0x17D, w >> 23 == 0x17E);
        let sop2 = w >> 28 != 0b1011;
        let src1 = (sop2 || sopc) && bits(w, 8, 8) == 254;
        if src1 || ((sop1 || sop2 || sopc) && bits(w, 0, 8) == 254) {
            return Err(invalid(w, "src_lds_direct in a scalar word"));
        }
        // s_set_gpr_idx_on's src1 field is its mode mask, no operand.
        let sopc = w >> 23 == 0x17E;
        let op = self.lookup(Format::Sopc, bits(w, 16, 7), w).ok();
        let gpr_idx_on = sopc && op == Some(crate::Op::S_SET_GPR_IDX_ON);
        let mut i = self.salu(if gpr_idx_on { w & !0xFF00 } else { w })?;
        // The operand-less SOPP ops take no immediate either.
        let bare = [
            "s_wakeup",
            "s_barrier",
            "s_icache_inv",
            "s_ttracedata",
            "s_endpgm_saved",
            "s_set_gpr_idx_off",
            "s_endpgm_ordered_ps_done",
        ];
        if w >> 23 == 0x17F && bits(w, 0, 16) != 0 && bare.contains(&i.op.name()) {
            return Err(invalid(w, "an immediate on an operand-less gfx9 SOPP op"));
        }
        match i.op.name() {
            "s_cbranch_g_fork" | "s_rfe_restore_b64" => {
                // (Both 64-bit for the fork, the table types neither.)
                let fork = i.op.name() == "s_cbranch_g_fork";
                let s0 = aligned(bits(w, 0, 8) as u8, 2);
                let s1 = aligned(bits(w, 8, 8) as u8, if fork { 2 } else { 1 });
                let (Some(s0), Some(s1)) = (s0, s1) else {
                    return Err(invalid(w, "misaligned gfx9 special registers"));
                };
                i.dst[0] = Operand::None;
                let ty1 = if fork { Ty::B64 } else { Ty::B32 };
                i.src[0] = self.operand(s0 as u32, Ty::B64, false)?;
                i.src[1] = self.operand(s1 as u32, ty1, false)?;
            }
            "s_set_gpr_idx_on" => i.src[1] = Operand::Const(bits(w, 8, 8) as u64),
            "s_cbranch_i_fork" => {
                let Some(d) = aligned(bits(w, 16, 7) as u8, 2) else {
                    return Err(invalid(w, "misaligned gfx9 special registers"));
                };
                i.dst[0] = sreg_operand(d as u32);
            }
            "s_movrels_b32" | "s_movrels_b64" | "s_rfe_b64" | "s_setpc_b64" => {
                if matches!(i.src[0], Operand::Const(_)) {
                    return Err(invalid(w, "a constant where gfx9 reads registers"));
                }
            }
            "s_cbranch_join" if matches!(i.src[0], Operand::Const(_)) => {
                return Err(invalid(w, "s_cbranch_join of a constant"));
            }
            _ => {}
        }
        Ok(i)
    }

    /// VOP1/VOP2/VOPC: gfx11's layout, with GCN's SDWA (0xF9) and DPP
    /// (0xFA, no DPP8) second dwords. gfx9's `v_cmpx` writes VCC (or the
    /// SDWA word's sdst) as well as EXEC.
    fn vop12c9(&mut self, w: u32) -> Result<Inst> {
        let src0 = bits(w, 0, 9);
        if matches!(src0, 0xE9 | 0xEA) {
            return Err(invalid(w, "reserved gfx9 source code"));
        }
        let sdwa = src0 == 0xF9;
        // v_nop's fields are clear; SDWA takes no literal.
        if w >> 25 == 0x3F && bits(w, 9, 8) == 0 && bits(w, 17, 8) != 0 {
            return Err(invalid(w, "v_nop with operands"));
        }
        let d = if sdwa { self.word(4)? } else { 0 };
        let lit1 = bit(d, 31) && bits(w, 9, 8) == 255 && w >> 25 < 0x3F;
        if sdwa && ((bit(d, 23) && bits(d, 0, 8) == 255) || lit1) {
            return Err(invalid(w, "a literal in gfx9 SDWA"));
        }
        let mut i = if sdwa { self.sdwa(w)? } else { self.vop12c(w)? };
        let info = i.op.info();
        let vopc = w >> 25 == 0x3E;
        if sdwa {
            sdwa_fields_allowed(&i, w, self.word(4)?)?;
        }
        if i.lane_sel != LaneSel::None && !dpp_allowed(&i, vopc) {
            return Err(invalid(w, "no such gfx9 DPP form"));
        }
        if let LaneSel::Dpp16 { fetch_inactive, .. } = &mut i.lane_sel {
            *fetch_inactive = false; // gfx9 has no fi; llvm-mc ignores the bit
        }
        if vopc && info.implicit.has(Implicit::WRITES_EXEC) && !(sdwa && bit(self.word(4)?, 15)) {
            i.dst[0] = Operand::Sgpr(sreg::VCC_LO);
        }
        if info.name == "v_accvgpr_mov_b32" {
            // gfx90a's AccVGPR-to-AccVGPR move: both fields name AccVGPRs.
            for o in [&mut i.dst[0], &mut i.src[0]] {
                if let Operand::Vgpr(n) = o {
                    *n += AGPR_BASE;
                }
            }
        }
        Ok(i)
    }

    /// VOP3 (0xD0-0xD3 below 0x380): gfx11's fields; gfx9 has no literal
    /// and no DPP here, and its `v_cmpx` e64 writes the sdst field.
    fn vop3_9(&mut self, w: u32) -> Result<Inst> {
        let w1 = self.word(4)?;
        for k in 0..3 {
            let code = bits(w1, 9 * k, 9);
            if code == 255 || reserved_src(code) || (k == 0 && code == 0xFA) {
                return Err(invalid(w, "gfx9 VOP3 source code"));
            }
        }
        let mut i = self.vop3(w)?;
        let info = i.op.info();
        unused_fields_clear(&i, w, w1)?;
        // An output modifier needs a float result (a compare has none);
        // a compare's sdst is a scalar code.
        let vopc = info.format == Format::Vopc;
        if vopc && bits(w, 7, 1) != 0 {
            return Err(invalid(w, "gfx9 VOPC sdst past the scalar codes"));
        }
        let float_dst = is_float(info.dst[0]) || info.dst[0] == Ty::V2F16;
        if i.mods.omod != 0 && (vopc || !float_dst) {
            return Err(invalid(w, "omod on an integer gfx9 VOP3 op"));
        }
        if !vop3_mods_allowed(&i) {
            return Err(invalid(w, "a modifier the gfx9 VOP3 op does not take"));
        }
        if info.format == Format::Vopc && info.implicit.has(Implicit::WRITES_EXEC) {
            i.dst[0] = sreg_operand(bits(w, 0, 8));
        }
        Ok(i)
    }

    /// VOP3P (0xD38): gfx11's VOP3P fields, or the MAI form.
    fn vop3p9(&mut self, w: u32) -> Result<Inst> {
        let opc = bits(w, 16, 7) as u16;
        if let Some(op) = crate::ops::op_by_encoding(self.family, Format::Mai, opc) {
            return self.mai(w, op);
        }
        let w1 = self.word(4)?;
        for k in 0..3 {
            let code = bits(w1, 9 * k, 9);
            if code == 255 || reserved_src(code) {
                return Err(invalid(w, "gfx9 VOP3P source code"));
            }
        }
        let i = self.vop3p(w)?;
        let info = i.op.info();
        for k in 0..3u32 {
            let set = bits(w1, 9 * k, 9) != 0 || bit(w1, 29 + k) || bit(w, 8 + k) || bit(w, 11 + k);
            if info.src[k as usize] == Ty::None && set {
                return Err(invalid(w, "a field of an absent gfx9 VOP3P source is set"));
            }
        }
        Ok(i)
    }

    /// VOP3P-MAI: vdst 0-7, cbsz 8-10, abid 11-14, acc_cd 15 (vdst and
    /// src2 are AccVGPRs), src0-2 and acc 59-60 (src A/B are AccVGPRs;
    /// a VGPR code only), blgp 61-63. cbsz/abid/blgp go to `imm`
    /// ([`crate::inst::mai`]).
    fn mai(&mut self, w: u32, op: crate::Op) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(op);
        let info = op.info();
        let acc = |on: bool, o: Operand| match o {
            Operand::Vgpr(n) if on => Operand::Vgpr(n + AGPR_BASE),
            o => o,
        };
        for k in 0..3 {
            let code = bits(w1, 9 * k as u32, 9);
            if info.src[k] != Ty::None {
                if code == 255 || reserved_src(code) {
                    return Err(invalid(w, "gfx9 VOP3P-MAI source code"));
                }
                self.src(&mut i, k, code, info.src[k])?;
            }
        }
        let vdst = Operand::Vgpr(bits(w, 0, 8) as u16);
        // The AccVGPR moves name their AccVGPR by the op, whatever the
        // bits; their other source fields must be clear, and the read's
        // source is a register.
        let moves = info.name.starts_with("v_accvgpr_");
        if moves && (bits(w1, 9, 18) != 0 || (info.name.contains("read") && bits(w1, 8, 1) == 0)) {
            return Err(invalid(w, "gfx9 AccVGPR move fields"));
        }
        match info.name {
            "v_accvgpr_write_b32" => i.dst[0] = acc(true, vdst),
            "v_accvgpr_read_b32" => {
                i.dst[0] = vdst;
                i.src[0] = acc(true, i.src[0]);
            }
            _ => {
                i.src[0] = acc(bit(w1, 27), i.src[0]);
                i.src[1] = acc(bit(w1, 28), i.src[1]);
                i.dst[0] = acc(bit(w, 15), vdst);
                // SMFMAC's src2 is its sparsity index, always a VGPR.
                if info.src[2] != Ty::None && !info.name.starts_with("v_smfmac") {
                    i.src[2] = acc(bit(w, 15), i.src[2]);
                }
                i.imm = (bits(w, 8, 3) | bits(w, 11, 4) << 3 | bits(w1, 29, 3) << 7) as i32;
                mai_operands_allowed(&i, w)?;
            }
        }
        Ok(i)
    }

    /// SMEM: sbase/2 0-5, sdata 6-12, soe 14, nv 15, glc 16, imm 17, op
    /// 18-25; the second dword holds a 21-bit offset (imm) or an SGPR
    /// offset code (bits 0-7, no imm), and soffset (25-31) with soe.
    fn smem9(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Smem, bits(w, 18, 8), w)?);
        let info = i.op.info();
        let sdata = sreg_operand(bits(w, 6, 7));
        // Wide data is no m0/exec, a base no m0 pair nor a quad from
        // xnack_mask; soffset no flat_scratch/xnack_mask half.
        // (The discards' sdata field is unused.)
        let unused = info.name.starts_with("s_dcache_discard");
        let wide = !unused && info.dst[0].dwords().max(info.src[2].dwords()) >= 2;
        let data = info.src[2] != Ty::None;
        if (wide || data) && matches!(bits(w, 6, 7), 124 | 126 | 127) {
            return Err(invalid(w, "gfx9 SMEM data in m0..exec"));
        }
        let glc = bit(w, 16);
        // Stores and atomics carry their data in src2; an atomic returns
        // the old value into the same registers only with glc. The
        // discards have no sdata (the table types their sbase as one).
        let returns = !info.implicit.has(Implicit::ATOMIC) || glc;
        let discard = info.name.starts_with("s_dcache_discard");
        if info.src[2] != Ty::None {
            i.src[2] = sdata;
        }
        if info.dst[0] != Ty::None && returns && !discard {
            i.dst[0] = sdata;
        } else if info.src[2] == Ty::None {
            i.aux = bits(w, 6, 7);
        }
        if info.src[0] != Ty::None {
            let align = if info.src[0] == Ty::B128 { !1 } else { !0 };
            i.src[0] = sreg_operand((bits(w, 0, 6) & align) * 2);
        }
        // imm: the 21-bit offset; soe: soffset in bits 25-31; neither:
        // soffset in bits 0-6.
        let (imm, soe) = (bit(w, 17), bit(w, 14));
        // The cache ops and clocks (no address) take no offset.
        if info.src[0] == Ty::None && imm {
            return Err(invalid(w, "an offset on a gfx9 SMEM op without address"));
        }
        if imm {
            i.imm = sext(bits(w1, 0, 21), 21);
        }
        // A buffer base from s102 on crosses into the special registers.
        let base = bits(w, 0, 6) * 2;
        let b128 = info.src[0] == Ty::B128;
        let crosses = base >= 124 || (102..108).contains(&base);
        if info.src[0] != Ty::None && (base == 124 || (b128 && crosses)) {
            return Err(invalid(w, "gfx9 SMEM base"));
        }
        if info.src[1] != Ty::None && (soe || !imm) {
            let at = if soe { 25 } else { 0 };
            i.src[1] = sreg_operand(bits(w1, at, 7));
        }
        if glc {
            i.flags |= flags::GLC;
        }
        Ok(i)
    }
}
