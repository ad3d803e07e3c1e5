//! gfx10.3 (RDNA2) words: the scalar ALU, VALU (VOP1/VOP2/VOPC/VOP3/VOP3P),
//! DS and export words keep gfx11's layouts (decoded by the shared readers
//! with gfx10's opcode lookups); SMEM, FLAT/GLOBAL/SCRATCH, MUBUF, MTBUF and
//! MIMG have their own field positions. Register code 124 is m0 and 125 is
//! null, the other way round from gfx11: [`swap_m0_null`] turns every
//! scalar operand into gfx11's numbering, so the executor reads one form.

use super::{bit, bits, blank, returned_data, sext, sreg_operand, unknown, Reader, Result};
use crate::mimg;
use crate::ops::op_by_vop3;
use crate::{flags, image, DecodeError, Format, Inst, Operand, Sdwa, Ty};

/// gfx10's register code for null (gfx11's m0).
const NULL10: u32 = 125;

/// gfx10's m0/null codes to gfx11's, in every scalar operand.
pub(super) fn swap_m0_null(i: &mut Inst) {
    for o in i.dst.iter_mut().chain(i.src.iter_mut()) {
        if let Operand::Sgpr(n) = o {
            *n = match *n {
                124 => 125,
                125 => 124,
                n => n,
            };
        }
    }
}

/// src0 codes that name DPP8 (0xE9, 0xEA) or DPP16 (0xFA).
fn is_dpp(code: u32) -> bool {
    matches!(code, 0xE9 | 0xEA | 0xFA)
}

fn no_dpp(word: u32, format: &'static str) -> DecodeError {
    DecodeError::Invalid {
        word,
        why: match format {
            "VOP3" => "gfx10 has no DPP form of VOP3",
            _ => "gfx10 has no DPP form of VOPC",
        },
    }
}

impl Reader<'_> {
    /// One gfx10 instruction whose first word is `w0`.
    pub(super) fn gfx10(&mut self, w0: u32) -> Result<Inst> {
        let mut i = match w0 >> 26 {
            0b110101 if self.is_interp(w0) => self.interp3(w0)?,
            // gfx10 has no DPP on VOP3 or VOPC (gfx11 added them).
            0b110101 if is_dpp(bits(self.word(4)?, 0, 9)) => return Err(no_dpp(w0, "VOP3")),
            0b110101 => self.vop3(w0)?,
            0b110011 => self.vop3p(w0)?,
            0b110010 => self.vintrp(w0)?,
            0b111100 => self.mimg10(w0)?,
            0b111110 => self.exp10(w0)?,
            0b110110 => self.ds(w0)?,
            0b110111 => self.flat10(w0)?,
            0b111000 => self.mubuf10(w0)?,
            0b111010 => self.mtbuf10(w0)?,
            0b111101 => self.smem10(w0)?,
            _ if w0 >> 25 == 0x3E && is_dpp(bits(w0, 0, 9)) => return Err(no_dpp(w0, "VOPC")),
            _ if w0 >> 31 == 0 && bits(w0, 0, 9) == 0xF9 => self.sdwa(w0)?,
            _ if w0 >> 31 == 0 => self.vop12c(w0)?,
            _ if w0 >> 30 == 0b10 => self.salu(w0)?,
            _ => {
                return Err(DecodeError::UnknownOpcode {
                    format: "gfx10",
                    opcode: w0 >> 26,
                    word: w0,
                })
            }
        };
        swap_m0_null(&mut i);
        Ok(i)
    }

    /// Whether a VOP3 word is one of the interpolation ops.
    fn is_interp(&self, w: u32) -> bool {
        op_by_vop3(self.family, bits(w, 16, 10) as u16)
            .is_some_and(|op| op.name().starts_with("v_interp_"))
    }

    /// The VOP3 forms of the interpolation ops: src0's field is no operand
    /// code but the attribute (bits 0-5), its channel (6-7) and `high` (8),
    /// kept as LDSDIR keeps them: `aux` attr << 2 | channel, `imm` high;
    /// `v_interp_mov_f32`'s src1 field is the parameter (p10, p20, p0), a
    /// constant in `src[1]`. Modifiers as VOP3's.
    fn interp3(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let op = op_by_vop3(self.family, bits(w, 16, 10) as u16).ok_or(unknown(
            "VOP3",
            bits(w, 16, 10),
            w,
        ))?;
        let mut i = blank(op);
        let info = op.info();
        i.dst[0] = Operand::Vgpr(bits(w, 0, 8) as u16);
        let a = bits(w1, 0, 9);
        if bit(a, 8) && op.name().ends_with("_f32") {
            return Err(DecodeError::Invalid {
                word: w,
                why: "gfx10 v_interp_*_f32 has no high",
            });
        }
        if bit(w, 8) || bit(w1, 29) {
            return Err(DecodeError::Invalid {
                word: w,
                why: "gfx10 v_interp_* attribute with abs/neg",
            });
        }
        i.aux = bits(a, 0, 6) << 2 | bits(a, 6, 2);
        i.imm = bit(a, 8) as i32;
        if op.name() == "v_interp_mov_f32" {
            i.src[1] = Operand::Const(bits(w1, 9, 9) as u64);
        } else {
            self.src(&mut i, 1, bits(w1, 9, 9), info.src[1])?;
        }
        if info.src[2] != Ty::None {
            self.src(&mut i, 2, bits(w1, 18, 9), info.src[2])?;
        }
        i.mods = crate::Mods {
            abs: bits(w, 8, 3) as u8,
            neg: bits(w1, 29, 3) as u8,
            clamp: bit(w, 15),
            omod: bits(w1, 27, 2) as u8,
            ..crate::Mods::default()
        };
        Ok(i)
    }

    /// EXP: gfx11's word without row_en (bit 13), with compr (bit 10: the
    /// sources are 16-bit pairs, vsrc0 for channels 0-1 and vsrc1 for 2-3)
    /// and vm (bit 12), kept in bits 6 and 7 of `imm`.
    fn exp10(&mut self, w: u32) -> Result<Inst> {
        let mut i = self.exp(w & !(1 << 13))?;
        if bit(w, 10) {
            let w1 = self.word(4)?;
            for (k, src) in i.src.iter_mut().enumerate() {
                if bit(w, k as u32) {
                    *src = Operand::Vgpr(bits(w1, 8 * (k as u32 / 2), 8) as u16);
                }
            }
            i.imm |= 1 << 6;
        }
        if bit(w, 12) {
            i.imm |= 1 << 7;
        }
        Ok(i)
    }

    /// VINTRP, the 32-bit interpolation word: vsrc 0-7 (`v_interp_mov_f32`:
    /// the parameter), channel 8-9, attribute 10-15, op 16-17, vdst 18-25.
    /// Its ops are the VOP3 ones (512 up), with the same operands.
    fn vintrp(&mut self, w: u32) -> Result<Inst> {
        let opc = 512 + bits(w, 16, 2);
        let op = op_by_vop3(self.family, opc as u16).ok_or(unknown("VINTRP", opc, w))?;
        let mut i = blank(op);
        i.dst[0] = Operand::Vgpr(bits(w, 18, 8) as u16);
        i.aux = bits(w, 10, 6) << 2 | bits(w, 8, 2);
        i.src[1] = if op.name() == "v_interp_mov_f32" {
            Operand::Const(bits(w, 0, 8) as u64)
        } else {
            Operand::Vgpr(bits(w, 0, 8) as u16)
        };
        Ok(i)
    }

    /// SDWA: src0 code 0xF9 on VOP1/VOP2/VOPC; the second word holds the
    /// src0 code (a VGPR, or a scalar/inline code when bit 23 is set),
    /// dst_sel 8-10, dst_unused 11-12, clamp 13 and omod 14-15 (VOPC: the
    /// scalar destination 8-14, written when bit 15 is set, else VCC),
    /// per source the select (16-18, 24-26), sext (19, 27), neg (20, 28),
    /// abs (21, 29), and whether src1's field is a scalar code (31).
    pub(super) fn sdwa(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let d = self.word(4)?;
        // The shared reader with src0 as the VGPR, then the SDWA fields.
        let mut i = self.vop12c(w & !0x1ff | (256 + bits(d, 0, 8)))?;
        let info = i.op.info();
        if bit(d, 23) {
            i.src[0] = self.operand(bits(d, 0, 8), info.src[0], false)?;
        }
        let vopc = w >> 25 == 0x3E;
        let vop2 = w >> 25 < 0x3E && info.src[1] != Ty::None;
        if (vop2 || vopc) && bit(d, 31) {
            i.src[1] = self.operand(bits(w, 9, 8), info.src[1], false)?;
        }
        i.mods.neg = (bit(d, 20) as u8) | (bit(d, 28) as u8) << 1;
        i.mods.abs = (bit(d, 21) as u8) | (bit(d, 29) as u8) << 1;
        let mut sdwa = Sdwa {
            src_sel: [bits(d, 16, 3) as u8, bits(d, 24, 3) as u8],
            sext: (bit(d, 19) as u8) | (bit(d, 27) as u8) << 1,
            ..Sdwa::default()
        };
        if vopc {
            if bit(d, 15) {
                i.dst[0] = sreg_operand(bits(d, 8, 7));
            }
        } else {
            sdwa.dst_sel = bits(d, 8, 3) as u8;
            sdwa.dst_unused = bits(d, 11, 2) as u8;
            i.mods.clamp = bit(d, 13);
            i.mods.omod = bits(d, 14, 2) as u8;
        }
        i.sdwa = Some(sdwa);
        Ok(i)
    }

    /// SMEM: sbase 0-5, sdata 6-12, dlc 14, glc 16, op 18-25; a 21-bit
    /// signed offset and soffset (25-31, null when absent) in the second.
    fn smem10(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Smem, bits(w, 18, 8), w)?);
        let info = i.op.info();
        if info.dst[0] != Ty::None {
            i.dst[0] = sreg_operand(bits(w, 6, 7));
        } else {
            i.aux = bits(w, 6, 7);
        }
        if info.src[0] != Ty::None {
            let align = if info.src[0] == Ty::B128 { !1 } else { !0 };
            i.src[0] = sreg_operand((bits(w, 0, 6) & align) * 2);
        }
        let soff = bits(w1, 25, 7);
        if soff != NULL10 && info.src[1] != Ty::None {
            i.src[1] = sreg_operand(soff);
        }
        i.imm = sext(bits(w1, 0, 21), 21);
        i.flags |=
            if bit(w, 16) { flags::GLC } else { 0 } | if bit(w, 14) { flags::DLC } else { 0 };
        Ok(i)
    }

    /// FLAT/SCRATCH/GLOBAL: a 12-bit offset, dlc 12, seg 14-15, glc 16,
    /// slc 17, op 18-24; vaddr, data, saddr (null when off; scratch: 127
    /// when both addresses are off) and vdst in the second word.
    fn flat10(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let fmt = super::flat_segment(bits(w, 14, 2), w)?;
        let mut i = blank(self.lookup(fmt, bits(w, 18, 7), w)?);
        let info = i.op.info();
        i.imm = if fmt == Format::Flat {
            bits(w, 0, 12) as i32
        } else {
            sext(bits(w, 0, 12), 12)
        };
        i.flags |= super::cache_flags(w, 16, 17, 12);
        let saddr = bits(w1, 16, 7);
        // saddr 127 (exec_hi): scratch's "off, off" (neither address);
        // global refuses it and m0 (124).
        let st = fmt == Format::Scratch && saddr == 127;
        if fmt == Format::Global && (saddr == 124 || saddr == 127) {
            return Err(DecodeError::Invalid {
                word: w,
                why: "gfx10 global saddr m0 or exec_hi",
            });
        }
        let has_saddr = saddr != NULL10 && fmt != Format::Flat && !st;
        // Scratch addresses by a VGPR or by an SGPR, not both.
        let has_vaddr = info.src[0] != Ty::None && !(fmt == Format::Scratch && (has_saddr || st));
        if fmt == Format::Scratch && has_vaddr {
            i.flags |= flags::SVE;
        }
        super::flat_operands(&mut i, w1, has_vaddr, has_saddr.then_some(saddr));
        Ok(i)
    }

    /// MUBUF: op bits 0-6 in 18-24, bit 7 in 25.
    fn mubuf10(&mut self, w: u32) -> Result<Inst> {
        let opc = bits(w, 18, 7) | bits(w, 25, 1) << 7;
        let mut i = blank(self.lookup(Format::Mubuf, opc, w)?);
        if bit(w, 16) {
            i.flags |= flags::LDS;
        }
        self.buffer10(w, i)
    }

    /// MTBUF: op bits 0-2 in 16-18 and bit 3 in bit 21 of the second word,
    /// the format in 19-25.
    fn mtbuf10(&mut self, w: u32) -> Result<Inst> {
        let w1 = self.word(4)?;
        let opc = bits(w, 16, 3) | bits(w1, 21, 1) << 3;
        let mut i = blank(self.lookup(Format::Mtbuf, opc, w)?);
        i.aux = bits(w, 19, 7);
        self.buffer10(w, i)
    }

    /// The parts MUBUF and MTBUF share: offset 0-11, offen 12, idxen 13,
    /// glc 14, dlc 15; vaddr, vdata, srsrc/4 (16-20), slc 22, tfe 23 and
    /// soffset in the second word.
    fn buffer10(&mut self, w: u32, mut i: Inst) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let info = i.op.info();
        i.imm = bits(w, 0, 12) as i32;
        for (on, f) in [
            (bit(w, 12), flags::OFFEN),
            (bit(w, 13), flags::IDXEN),
            (bit(w, 14), flags::GLC),
            (bit(w, 15), flags::DLC),
            (bit(w1, 22), flags::SLC),
            (bit(w1, 23), flags::TFE),
        ] {
            if on {
                i.flags |= f;
            }
        }
        if i.flags & (flags::OFFEN | flags::IDXEN) != 0 {
            i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        }
        let vdata = Operand::Vgpr(bits(w1, 8, 8) as u16);
        if info.src[1] != Ty::None {
            i.src[1] = vdata;
        }
        // With lds the loaded data goes to LDS at M0, not to vdata.
        if i.flags & flags::LDS == 0 {
            returned_data(&mut i, vdata);
        }
        if info.src[2] != Ty::None {
            i.src[2] = sreg_operand(bits(w1, 16, 5) * 4);
            i.src[3] = self.operand(bits(w1, 24, 8), Ty::B32, false)?;
        }
        Ok(i)
    }

    /// MIMG: nsa 1-2 (the count of extra address dwords), dim 3-5, dlc 7,
    /// dmask 8-11, unorm 12, glc 13, r128 15, tfe 16, lwe 17, op bits 0-6
    /// in 18-24 and bit 7 in bit 0, slc 25; vaddr, vdata, srsrc/4 (16-20),
    /// ssamp/4 (21-25), a16 (30) and d16 (31) in the second word.
    fn mimg10(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let opc = bits(w, 18, 7) | bits(w, 0, 1) << 7;
        let mut i = blank(self.lookup(Format::Mimg, opc, w)?);
        // NSA: 1-3 extra dwords of address bytes (vaddr1-4 in `imm`, 5-12
        // in `nsa_ext`).
        let nsa = bits(w, 1, 2);
        if nsa > 0 {
            self.need(8 + 4 * nsa as usize)?;
            i.imm = self.word(8)? as i32;
            for k in 1..nsa as usize {
                let b = self.word(8 + 4 * k)?.to_le_bytes();
                i.nsa_ext[4 * (k - 1)..4 * k].copy_from_slice(&b);
            }
        }
        let vdata = Operand::Vgpr(bits(w1, 8, 8) as u16);
        mimg::place_data(&mut i, vdata);
        i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        i.src[1] = sreg_operand(bits(w1, 16, 5) * 4);
        if mimg::has_sampler(i.op.name()) {
            i.src[2] = sreg_operand(bits(w1, 21, 5) * 4);
        }
        let field = |on: bool, f: u32| if on { f } else { 0 };
        i.aux = bits(w, 8, 4)
            | bits(w, 3, 3) << image::DIM_SHIFT
            | field(nsa != 0, image::NSA)
            | field(bit(w, 12), image::UNORM)
            | field(bit(w, 15), image::R128)
            | field(bit(w1, 30), image::A16)
            | field(bit(w1, 31), image::D16)
            | field(bit(w, 17), image::LWE);
        i.flags |= super::cache_flags(w, 13, 25, 7) | if bit(w, 16) { flags::TFE } else { 0 };
        Ok(i)
    }
}
