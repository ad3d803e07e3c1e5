//! CDNA words (gfx90a, gfx94): GCN's encodings. The SOP* and VOP1/VOP2/VOPC
//! words have gfx11's layouts; VOP3 (0xD0, a 10-bit opcode space holding
//! VOPC, VOP2, VOP1, the VOP3-only ops and, from 0x380, VOP3P and
//! VOP3P-MAI) keeps gfx11's field positions under another prefix; SMEM
//! (0xC0) and the memory words ([`super::gfx9_mem`]) have GCN's own field
//! positions. Scalar register codes are turned into gfx11's numbering
//! ([`gfx9_sregs`]: gfx9's m0 is 124; it has no null), AccVGPRs into
//! `Vgpr(AGPR_BASE + n)`.

use super::{bit, bits, blank, sext, sreg_operand, Reader, Result};
use crate::{
    flags, sreg, DecodeError, Format, Implicit, Inst, LaneSel, Operand, Special, Ty, AGPR_BASE,
};

/// gfx9's scalar codes to gfx11's numbering, in every scalar operand: m0
/// is 124 and (as llvm-mc-19 decodes gfx9) null 125, gfx10's order.
pub(super) fn gfx9_sregs(i: &mut Inst) {
    super::gfx10::swap_m0_null(i);
}

/// llvm-mc reads a 64-bit (or wider) scalar operand from an even register:
/// it drops the low bit of an SGPR code and refuses an odd special pair
/// (s[103:104], xnack_mask_hi:vcc_lo, …) and m0/null.
fn align_pairs(i: &mut Inst, word: u32) -> Result<()> {
    let info = i.op.info();
    let wide = |ty: Ty| ty.dwords() >= 2 || ty == Ty::Mask;
    let slots = i
        .dst
        .iter_mut()
        .zip(info.dst)
        .chain(i.src.iter_mut().zip(info.src));
    for (o, ty) in slots {
        if *o == Operand::Special(Special::LdsDirect) && wide(ty) {
            return Err(invalid(word, "64-bit src_lds_direct"));
        }
        if let (Operand::Sgpr(n), true) = (o, wide(ty)) {
            match *n {
                0..=101 | 108..=123 => *n &= !1,
                124 => return Err(invalid(word, "gfx9 64-bit m0 operand")),
                125 => {}
                n if n % 2 == 1 => return Err(invalid(word, "odd gfx9 special register pair")),
                _ => {}
            }
        }
    }
    Ok(())
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

/// The SDWA fields llvm-mc accepts for the op (`d`, the SDWA dword): neg
/// and abs on float sources, sext on integer ones, omod on a float
/// result, no src1 fields on VOP1.
fn sdwa_fields_allowed(i: &Inst, w: u32, d: u32) -> Result<()> {
    let info = i.op.info();
    let vop1 = w >> 25 == 0x3F;
    let vopc = w >> 25 == 0x3E;
    let mut ok = !(vop1 && bits(d, 24, 8) != 0);
    for k in 0..2 {
        let (sext, negabs) = (bit(d, 19 + 8 * k), bits(d, 20 + 8 * k, 2) != 0);
        let float = is_float(info.src[k as usize]);
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
        let mut i = self.salu(w)?;
        match i.op.name() {
            "s_cbranch_g_fork" | "s_rfe_restore_b64" => {
                i.dst[0] = Operand::None;
                i.src[1] = self.operand(bits(w, 8, 8), Ty::B32, false)?;
            }
            "s_set_gpr_idx_on" => i.src[1] = Operand::Const(bits(w, 8, 8) as u64),
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
        let mut i = if sdwa { self.sdwa(w)? } else { self.vop12c(w)? };
        let info = i.op.info();
        if sdwa {
            sdwa_fields_allowed(&i, w, self.word(4)?)?;
        }
        let vopc = w >> 25 == 0x3E;
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
        if let LaneSel::Dpp16 { .. } = i.lane_sel {
            // gfx9 has no fetch-inactive bit.
            if bit(self.word(4)?, 18) {
                return Err(invalid(w, "gfx9 DPP has no fi"));
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
        // The AccVGPR moves name their AccVGPR by the op, whatever the bits.
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
        let (imm, soe) = (bit(w, 17), bit(w, 14));
        if imm {
            i.imm = sext(bits(w1, 0, 21), 21);
            if soe {
                i.src[1] = sreg_operand(bits(w1, 25, 7));
            }
        } else if info.src[1] != Ty::None {
            i.src[1] = sreg_operand(bits(w1, 0, 7));
        }
        if glc {
            i.flags |= flags::GLC;
        }
        Ok(i)
    }
}
