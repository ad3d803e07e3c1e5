//! Bytes to [`Inst`]: gfx11's encodings here, gfx12's own in [`gfx12`]
//! (it shares gfx11's scalar, VALU, VOPD and DS layouts, with its own
//! opcode lookups), gfx10's in [`gfx10`] (scalar, VALU, DS and export
//! layouts shared with gfx11) and CDNA's in [`gfx9`] (scalar and VALU
//! layouts shared with gfx11) and [`gfx9_mem`].

mod gfx10;
mod gfx12;
mod gfx9;
mod gfx9_mem;

use crate::consts::inline_value;
use crate::mimg;
use crate::ops::{op_by_encoding, op_by_vop3, op_by_vopd_y, OpInfo};
use crate::{
    flags, image, sreg, DecodeError, Family, Format, Implicit, Inst, LaneSel, Mods, Op, Operand,
    Special, Ty,
};

type Result<T> = std::result::Result<T, DecodeError>;

/// Literal-operand flag bits (one per source slot) in [`Inst::flags`]: set
/// when the constant came from the instruction's 32-bit literal rather than an
/// inline code, so the disassembler can print it as objdump does.
pub const LIT_SRC0: u16 = 1 << 10;

/// Decode one instruction at `bytes[0]`.
pub fn decode(family: Family, bytes: &[u8]) -> Result<Inst> {
    let mut r = Reader {
        family,
        bytes,
        len: 4,
        lit: None,
    };
    let w0 = r.word(0)?;
    let mut inst = match family {
        Family::Gfx11 => r.gfx11(w0)?,
        Family::Gfx12 => r.gfx12(w0)?,
        Family::Gfx10 => r.gfx10(w0)?,
        Family::Gfx90a | Family::Gfx94 => r.gfx9(w0)?,
    };
    inst.size = r.len as u8;
    inst.family = family;
    if let Some(y) = inst.vopd_y.as_mut() {
        y.size = r.len as u8;
        y.family = family;
    }
    Ok(inst)
}

impl Reader<'_> {
    /// One gfx11 instruction whose first word is `w0`.
    fn gfx11(&mut self, w0: u32) -> Result<Inst> {
        let r = self;
        Ok(match w0 >> 26 {
            0b110101 => r.vop3(w0)?,
            0b110010 => r.vopd(w0)?,
            0b110011 if w0 >> 24 == 0xCC => r.vop3p(w0)?,
            0b110011 if w0 >> 24 == 0xCD => r.vinterp(w0)?,
            0b110011 if w0 >> 24 == 0xCE => r.lds_direct(w0)?,
            0b111100 => r.mimg(w0)?,
            0b111110 => r.exp(w0)?,
            0b110110 => r.ds(w0)?,
            0b110111 => r.flat(w0)?,
            0b111000 => r.mubuf(w0)?,
            0b111010 => r.mtbuf(w0)?,
            0b111101 => r.smem(w0)?,
            _ if w0 >> 31 == 0 => r.vop12c(w0)?,
            _ if w0 >> 30 == 0b10 => r.salu(w0)?,
            _ => {
                return Err(DecodeError::UnknownOpcode {
                    format: "gfx11",
                    opcode: w0 >> 26,
                    word: w0,
                })
            }
        })
    }
}

/// Decode every instruction of `code`, walking linearly; after an error the
/// walk resumes 4 bytes further on.
pub fn decode_all(
    family: Family,
    code: &[u8],
) -> Vec<(u32, std::result::Result<Inst, DecodeError>)> {
    let mut out = Vec::new();
    let mut pos = 0usize;
    while pos < code.len() {
        let res = decode(family, &code[pos..]);
        let step = res.as_ref().map_or(4, |i| i.size as usize);
        out.push((pos as u32, res));
        pos += step;
    }
    out
}

/// A blank instruction of `op` (the family is stamped by [`decode`]).
pub(crate) fn blank(op: Op) -> Inst {
    Inst::new(op, Family::Gfx11)
}

/// A FLAT word's registers, laid out alike in gfx10 and gfx11: the address
/// VGPR (when `vaddr`), the data VGPR, the SGPR address (`saddr`, already
/// in gfx11's numbering) and the returned data, from its second word `w1`.
fn flat_operands(i: &mut Inst, w1: u32, vaddr: bool, saddr: Option<u32>) {
    if vaddr {
        i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
    }
    if i.op.info().src[1] != Ty::None {
        i.src[1] = Operand::Vgpr(bits(w1, 8, 8) as u16);
    }
    if let Some(saddr) = saddr {
        i.src[2] = sreg_operand(saddr);
    }
    returned_data(i, Operand::Vgpr(bits(w1, 24, 8) as u16));
}

/// The format of a FLAT word's segment field `seg` (word `w`).
fn flat_segment(seg: u32, w: u32) -> Result<Format> {
    match seg {
        0 => Ok(Format::Flat),
        1 => Ok(Format::Scratch),
        2 => Ok(Format::Global),
        _ => Err(DecodeError::Invalid {
            word: w,
            why: "reserved FLAT segment",
        }),
    }
}

fn bits(w: u32, lo: u32, n: u32) -> u32 {
    (w >> lo) & ((1 << n) - 1)
}

fn bit(w: u32, b: u32) -> bool {
    w >> b & 1 != 0
}

fn sext(v: u32, n: u32) -> i32 {
    ((v << (32 - n)) as i32) >> (32 - n)
}

fn unknown(format: &'static str, opcode: u32, word: u32) -> DecodeError {
    DecodeError::UnknownOpcode {
        format,
        opcode,
        word,
    }
}

fn format_name(f: Format) -> &'static str {
    match f {
        Format::Sop1 => "SOP1",
        Format::Sop2 => "SOP2",
        Format::Sopk => "SOPK",
        Format::Sopc => "SOPC",
        Format::Sopp => "SOPP",
        Format::Smem => "SMEM",
        Format::Vop1 => "VOP1",
        Format::Vop2 => "VOP2",
        Format::Vopc => "VOPC",
        Format::Ds => "DS",
        Format::Flat => "FLAT",
        Format::Global => "GLOBAL",
        Format::Scratch => "SCRATCH",
        Format::Mubuf => "MUBUF",
        Format::Mtbuf => "MTBUF",
        Format::Mimg => "MIMG",
        Format::Exp => "EXP",
        Format::Vinterp => "VINTERP",
        Format::LdsDirect => "LDSDIR",
        _ => "VOP3",
    }
}

/// A scalar register operand or special register from a 7/8-bit code.
fn sreg_operand(code: u32) -> Operand {
    Operand::Sgpr(code as u8)
}

/// VGPR `n` of an operand slot; `half` says the slot is a 16-bit one of a
/// VOP1/VOP2/VOPC 32-bit encoding (or its DPP form), where v128 and above
/// name the high half of v(n-128) (true16), whatever LLVM's fake16 printer
/// calls them.
fn vgpr_for(n: u32, half: bool) -> Operand {
    if half && n >= 128 {
        Operand::VgprHi((n - 128) as u16)
    } else {
        Operand::Vgpr(n as u16)
    }
}

/// Whether source `k` of a VOP1/VOP2/VOPC op is a 16-bit value. The class
/// mask of `v_cmp(x)_class_f16` is one too (LLVM gives it a 16-bit register
/// class), though LLVM types its constants as 32-bit, so the table says B32.
fn half_src(info: &OpInfo, k: usize) -> bool {
    is16(info.src[k]) || (k == 1 && info.implicit.has(Implicit::HALF_S1))
}

fn is16(ty: Ty) -> bool {
    matches!(ty, Ty::B16 | Ty::F16 | Ty::BF16)
}

/// Cursor over one instruction's bytes: `len` is the length consumed so far
/// (the literal goes right after the fixed words).
struct Reader<'a> {
    /// Whose opcode lookups apply.
    family: Family,
    bytes: &'a [u8],
    len: usize,
    lit: Option<u32>,
}

impl Reader<'_> {
    /// The op `format`'s `opcode` field names in the reader's family.
    fn lookup(&self, format: Format, opcode: u32, word: u32) -> Result<Op> {
        op_by_encoding(self.family, format, opcode as u16).ok_or(unknown(
            format_name(format),
            opcode,
            word,
        ))
    }

    fn word(&self, at: usize) -> Result<u32> {
        let b = self.bytes.get(at..at + 4).ok_or(DecodeError::Truncated {
            needed: at + 4,
            available: self.bytes.len(),
        })?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// Extend the instruction to `n` fixed bytes.
    fn need(&mut self, n: usize) -> Result<()> {
        self.word(n - 4)?;
        self.len = self.len.max(n);
        Ok(())
    }

    /// The 32-bit literal (read once, shared by all operands and VOPD halves).
    fn literal(&mut self) -> Result<u32> {
        if let Some(l) = self.lit {
            return Ok(l);
        }
        let l = self.word(self.len)?;
        self.len += 4;
        self.lit = Some(l);
        Ok(l)
    }

    /// A 9-bit source operand of type `ty` into `inst.src[slot]`.
    fn src(&mut self, inst: &mut Inst, slot: usize, code: u32, ty: Ty) -> Result<()> {
        self.src_half(inst, slot, code, ty, false)
    }

    /// A source operand whose VGPRs may name 16-bit halves (see [`vgpr_for`]).
    fn src_half(
        &mut self,
        inst: &mut Inst,
        slot: usize,
        code: u32,
        ty: Ty,
        half: bool,
    ) -> Result<()> {
        inst.src[slot] = self.operand(code, ty, half)?;
        if code == 255 {
            inst.flags |= LIT_SRC0 << slot;
            inst.aux = self.literal()?;
        }
        Ok(())
    }

    fn operand(&mut self, code: u32, ty: Ty, half: bool) -> Result<Operand> {
        Ok(match code {
            0..=127 => sreg_operand(code),
            256..=511 => vgpr_for(code - 256, half),
            255 => Operand::Const(self.literal_for(ty)?),
            235 => Operand::Special(Special::SharedBase),
            236 => Operand::Special(Special::SharedLimit),
            237 => Operand::Special(Special::PrivateBase),
            238 => Operand::Special(Special::PrivateLimit),
            239 => Operand::Special(Special::PopsExitingWaveId),
            251 => Operand::Special(Special::Vccz),
            252 => Operand::Special(Special::Execz),
            253 => Operand::Special(Special::Scc),
            254 => Operand::Special(Special::LdsDirect),
            _ => match inline_value(code as u16, ty) {
                Some(v) => Operand::Const(v),
                None => {
                    return Err(DecodeError::Invalid {
                        word: code,
                        why: "reserved operand code",
                    })
                }
            },
        })
    }

    /// The literal as a value of type `ty`: a 64-bit float literal supplies
    /// the high half; 16-bit operands use the low half; 64-bit integer
    /// operands are zero-extended.
    fn literal_for(&mut self, ty: Ty) -> Result<u64> {
        let l = self.literal()? as u64;
        Ok(match ty {
            Ty::F64 => l << 32,
            t if is16(t) => l & 0xffff,
            _ => l,
        })
    }

    // ---- scalar ALU -----------------------------------------------------

    fn salu(&mut self, w: u32) -> Result<Inst> {
        match (w >> 23, w >> 28) {
            (0x17D, _) => self.sop1(w),
            (0x17E, _) => self.sopc(w),
            (0x17F, _) => self.sopp(w),
            (_, 0b1011) => self.sopk(w),
            _ => self.sop2(w),
        }
    }

    fn sop1(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Sop1, bits(w, 8, 8), w)?);
        let info = i.op.info();
        if info.dst[0] != Ty::None {
            i.dst[0] = sreg_operand(bits(w, 16, 7));
        }
        if info.src[0] != Ty::None {
            // SOP1's f16 ops (gfx1150+) keep their whole 32-bit literal.
            let ty = if is16(info.src[0]) {
                Ty::B32
            } else {
                info.src[0]
            };
            self.src(&mut i, 0, bits(w, 0, 8), ty)?;
        } else if info.implicit.has(Implicit::MSG_RTN) {
            i.src[0] = Operand::Const(bits(w, 0, 8) as u64); // the message id
        }
        Ok(i)
    }

    fn sop2(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Sop2, bits(w, 23, 7), w)?);
        let info = i.op.info();
        i.dst[0] = sreg_operand(bits(w, 16, 7));
        self.src(&mut i, 0, bits(w, 0, 8), info.src[0])?;
        self.src(&mut i, 1, bits(w, 8, 8), info.src[1])?;
        if info.implicit.has(Implicit::ACCUMULATES) {
            i.src[2] = i.dst[0]; // s_fmac_f32/f16
        }
        // s_fmaak_f32: S0 * S1 + K; s_fmamk_f32: S0 * K + S1 (as VOP2).
        if info.implicit.has(Implicit::K_ADDEND) {
            i.aux = self.literal()?;
            i.src[2] = Operand::Const(i.aux as u64);
            i.flags |= LIT_SRC0 << 2;
        } else if info.implicit.has(Implicit::K_FACTOR) {
            i.aux = self.literal()?;
            i.src[2] = i.src[1];
            i.flags |= (i.flags & (LIT_SRC0 << 1)) << 1;
            i.src[1] = Operand::Const(i.aux as u64);
            i.flags |= LIT_SRC0 << 1;
        }
        Ok(i)
    }

    fn sopc(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Sopc, bits(w, 16, 7), w)?);
        let info = i.op.info();
        self.src(&mut i, 0, bits(w, 0, 8), info.src[0])?;
        self.src(&mut i, 1, bits(w, 8, 8), info.src[1])?;
        Ok(i)
    }

    fn sopk(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Sopk, bits(w, 23, 5), w)?);
        let info = i.op.info();
        let reg = sreg_operand(bits(w, 16, 7));
        if info.dst[0] != Ty::None {
            i.dst[0] = reg;
        } else {
            i.src[0] = reg;
        }
        i.imm = w as u16 as i16 as i32;
        if i.op == Op::S_SETREG_IMM32_B32 {
            i.aux = self.literal()?;
            i.src[0] = Operand::Const(i.aux as u64);
            i.flags |= LIT_SRC0;
        }
        Ok(i)
    }

    fn sopp(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Sopp, bits(w, 16, 7), w)?);
        i.imm = w as u16 as i16 as i32;
        Ok(i)
    }

    fn smem(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Smem, bits(w, 18, 8), w)?);
        smem_registers(&mut i, w, w1);
        i.imm = sext(bits(w1, 0, 21), 21);
        i.flags |=
            if bit(w, 14) { flags::GLC } else { 0 } | if bit(w, 13) { flags::DLC } else { 0 };
        Ok(i)
    }

    // ---- vector ALU -----------------------------------------------------

    /// VOP1, VOP2 and VOPC (the 32-bit encodings), with DPP16/DPP8.
    fn vop12c(&mut self, w: u32) -> Result<Inst> {
        let (fmt, opc) = match w >> 25 {
            0x3F => (Format::Vop1, bits(w, 9, 8)),
            0x3E => (Format::Vopc, bits(w, 17, 8)),
            _ => (Format::Vop2, bits(w, 25, 6)),
        };
        let mut i = blank(self.lookup(fmt, opc, w)?);
        let info = i.op.info();
        // gfx10 and gfx9 have no true16: v128 and up are whole registers.
        let t16 = matches!(self.family, Family::Gfx11 | Family::Gfx12);
        let half = |k| t16 && half_src(info, k);
        let src0 = bits(w, 0, 9);
        self.lane_sel(&mut i, src0, half(0), true)?;
        if i.lane_sel == LaneSel::None {
            self.src_half(&mut i, 0, src0, info.src[0], half(0))?;
        }
        if fmt != Format::Vop1 && info.src[1] != Ty::None {
            i.src[1] = vgpr_for(bits(w, 9, 8), half(1));
        }
        let vdst = bits(w, 17, 8);
        match fmt {
            Format::Vopc => {
                let mask = if info.implicit.has(Implicit::WRITES_EXEC) {
                    sreg::EXEC_LO
                } else {
                    sreg::VCC_LO
                };
                i.dst[0] = Operand::Sgpr(mask);
            }
            _ if info.implicit.has(Implicit::SCALAR_DST) => i.dst[0] = sreg_operand(vdst),
            _ if info.dst[0] != Ty::None => i.dst[0] = vgpr_for(vdst, t16 && is16(info.dst[0])),
            _ => {}
        }
        if info.implicit.has(Implicit::SWAPS) {
            // Both operands are read and written.
            i.dst[1] = i.src[0];
            i.src[1] = i.dst[0];
        }
        self.short_implicit(&mut i)?;
        Ok(i)
    }

    /// Operands the 32-bit encodings leave implicit: VCC carry/select,
    /// accumulators and the fmaak/fmamk literal.
    fn short_implicit(&mut self, i: &mut Inst) -> Result<()> {
        let info = i.op.info();
        if info.dst[1] == Ty::Mask {
            i.dst[1] = Operand::Sgpr(sreg::VCC_LO);
        }
        if info.src[2] == Ty::Mask {
            i.src[2] = Operand::Sgpr(sreg::VCC_LO);
        }
        let implicit = info.implicit;
        if implicit.has(Implicit::K_ADDEND) {
            i.src[2] = Operand::Const(self.literal_for(info.src[2])?);
            i.flags |= LIT_SRC0 << 2;
            i.aux = self.literal()?;
        } else if implicit.has(Implicit::K_FACTOR) {
            i.src[2] = i.src[1];
            i.src[1] = Operand::Const(self.literal_for(info.src[1])?);
            i.flags |= LIT_SRC0 << 1;
            i.aux = self.literal()?;
        } else if implicit.has(Implicit::ACCUMULATES) {
            i.src[2] = i.dst[0];
        }
        Ok(())
    }

    /// DPP: src0 code 250 (DPP16) or 233/234 (DPP8) is followed by a dword
    /// holding the real src0 VGPR and the lane selection. `half`: src0 is a
    /// 16-bit slot of a 32-bit encoding; `short`: the encoding is VOP1/2/C.
    fn lane_sel(&mut self, i: &mut Inst, src0: u32, half: bool, short: bool) -> Result<()> {
        if !matches!(src0, 233 | 234 | 250) {
            return Ok(());
        }
        let at = self.len;
        self.need(at + 4)?;
        let d = self.word(at)?;
        i.src[0] = vgpr_for(bits(d, 0, 8), half && short);
        i.lane_sel = if src0 == 250 {
            if short {
                // DPP16's own source modifiers (VOP3 uses its fields).
                i.mods.neg |= (bit(d, 20) as u8) | (bit(d, 22) as u8) << 1;
                i.mods.abs |= (bit(d, 21) as u8) | (bit(d, 23) as u8) << 1;
            }
            LaneSel::Dpp16 {
                ctrl: bits(d, 8, 9) as u16,
                row_mask: bits(d, 28, 4) as u8,
                bank_mask: bits(d, 24, 4) as u8,
                bound_ctrl: bit(d, 19),
                fetch_inactive: bit(d, 18),
            }
        } else {
            let mut sel = [0u8; 8];
            for (k, s) in sel.iter_mut().enumerate() {
                *s = bits(d, 8 + 3 * k as u32, 3) as u8;
            }
            LaneSel::Dpp8 {
                sel,
                fetch_inactive: src0 == 234,
            }
        };
        Ok(())
    }

    fn vop3(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let opc = bits(w, 16, 10);
        let op = op_by_vop3(self.family, opc as u16).ok_or(unknown("VOP3", opc, w))?;
        let mut i = blank(op);
        let info = op.info();
        let native = op.encoding(self.family).map_or(info.format, |e| e.format);
        if native != Format::Vop3 && native != Format::Vop3sd {
            i.flags |= flags::E64;
        }
        let sd = info.dst[1] == Ty::Mask;
        let vdst = bits(w, 0, 8);
        i.mods = Mods {
            abs: if sd { 0 } else { bits(w, 8, 3) as u8 },
            neg: bits(w1, 29, 3) as u8,
            opsel: if sd { 0 } else { bits(w, 11, 4) as u8 },
            clamp: bit(w, 15),
            omod: bits(w1, 27, 2) as u8,
            ..Mods::default()
        };
        let codes = [bits(w1, 0, 9), bits(w1, 9, 9), bits(w1, 18, 9)];
        self.lane_sel(&mut i, codes[0], false, false)?;
        for (k, &code) in codes.iter().enumerate() {
            let ty = info.src[k];
            if ty != Ty::None
                && !(k == 0 && i.lane_sel != LaneSel::None)
                && !(k == 2 && info.implicit.has(Implicit::ACCUMULATES))
            {
                self.src(&mut i, k, code, ty)?;
            }
        }
        if sd {
            i.dst[1] = sreg_operand(bits(w, 8, 7));
        }
        if info.format == Format::Vopc {
            i.dst[0] = if info.implicit.has(Implicit::WRITES_EXEC) {
                Operand::Sgpr(sreg::EXEC_LO)
            } else {
                sreg_operand(vdst)
            };
        } else if info.implicit.has(Implicit::SCALAR_DST) {
            i.dst[0] = sreg_operand(vdst);
        } else if info.dst[0] != Ty::None {
            i.dst[0] = Operand::Vgpr(vdst as u16);
        }
        if info.implicit.has(Implicit::ACCUMULATES) {
            i.src[2] = i.dst[0];
        }
        if info.implicit.has(Implicit::READS_VCC) {
            i.src[3] = Operand::Sgpr(sreg::VCC_LO); // implicit VCC read
        }
        Ok(i)
    }

    fn vop3p(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let opc = bits(w, 16, 7);
        let mut i = blank(self.lookup(Format::Vop3p, opc, w)?);
        let info = i.op.info();
        i.mods = Mods {
            neg: bits(w1, 29, 3) as u8,
            neg_hi: bits(w, 8, 3) as u8,
            opsel: bits(w, 11, 3) as u8,
            opsel_hi: (bits(w1, 27, 2) | (bits(w, 14, 1) << 2)) as u8,
            clamp: bit(w, 15),
            ..Mods::default()
        };
        i.dst[0] = Operand::Vgpr(bits(w, 0, 8) as u16);
        for k in 0..3 {
            if info.src[k] != Ty::None {
                self.src(&mut i, k, bits(w1, 9 * k as u32, 9), info.src[k])?;
            }
        }
        Ok(i)
    }

    fn vopd(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let opx = op_by_encoding(self.family, Format::Vopd, bits(w, 22, 4) as u16)
            .ok_or(unknown("VOPD", bits(w, 22, 4), w))?;
        let opy = op_by_vopd_y(self.family, bits(w, 17, 5) as u16).ok_or(unknown(
            "VOPD",
            bits(w, 17, 5),
            w,
        ))?;
        let vdstx = bits(w1, 24, 8);
        // The Y destination's low bit is the inverse of X's.
        let vdsty = bits(w1, 17, 7) << 1 | (!vdstx & 1);
        let x = self.vopd_half(opx, vdstx, bits(w, 0, 9), bits(w, 9, 8))?;
        let y = self.vopd_half(opy, vdsty, bits(w1, 0, 9), bits(w1, 9, 8))?;
        Ok(Inst {
            vopd_y: Some(Box::new(y)),
            ..x
        })
    }

    fn vopd_half(&mut self, op: Op, vdst: u32, src0: u32, vsrc1: u32) -> Result<Inst> {
        let mut i = blank(op);
        let info = op.info();
        i.dst[0] = Operand::Vgpr(vdst as u16);
        self.src(&mut i, 0, src0, info.src[0])?;
        if info.src[1] != Ty::None {
            i.src[1] = Operand::Vgpr(vsrc1 as u16);
        }
        self.short_implicit(&mut i)?;
        Ok(i)
    }

    // ---- memory ---------------------------------------------------------

    fn ds(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Ds, bits(w, 18, 8), w)?);
        let info = i.op.info();
        i.imm = bits(w, 0, 16) as i32;
        if bit(w, 17) {
            i.flags |= flags::GDS;
        }
        if info.dst[0] != Ty::None {
            i.dst[0] = Operand::Vgpr(bits(w1, 24, 8) as u16);
        }
        // ADDR, DATA0 and DATA1 fill the sources in order (the addtid ops
        // have no ADDR: the table leaves their first source empty).
        for (k, lo) in [0, 8, 16].into_iter().enumerate() {
            if info.src[k] != Ty::None {
                i.src[k] = Operand::Vgpr(bits(w1, lo, 8) as u16);
            }
        }
        Ok(i)
    }

    fn flat(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let fmt = flat_segment(bits(w, 16, 2), w)?;
        let mut i = blank(self.lookup(fmt, bits(w, 18, 7), w)?);
        let info = i.op.info();
        // FLAT-segment offsets are unsigned; GLOBAL/SCRATCH ones signed.
        i.imm = if fmt == Format::Flat {
            bits(w, 0, 13) as i32
        } else {
            sext(bits(w, 0, 13), 13)
        };
        i.flags |= cache_flags(w, 14, 15, 13);
        let saddr = bits(w1, 16, 7);
        let has_saddr = saddr != sreg::NULL as u32 && fmt != Format::Flat;
        // The addtid ops have no address VGPR (the table says so).
        let has_vaddr = info.src[0] != Ty::None && (fmt != Format::Scratch || bit(w1, 23));
        if fmt == Format::Scratch && bit(w1, 23) {
            i.flags |= flags::SVE;
        }
        flat_operands(&mut i, w1, has_vaddr, has_saddr.then_some(saddr));
        Ok(i)
    }

    fn mubuf(&mut self, w: u32) -> Result<Inst> {
        let i = blank(self.lookup(Format::Mubuf, bits(w, 18, 8), w)?);
        self.buffer(w, i)
    }

    fn mtbuf(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::Mtbuf, bits(w, 15, 4), w)?);
        i.aux = bits(w, 19, 7);
        self.buffer(w, i)
    }

    /// The parts MUBUF and MTBUF share.
    fn buffer(&mut self, w: u32, mut i: Inst) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let info = i.op.info();
        i.imm = bits(w, 0, 12) as i32;
        i.flags |= cache_flags(w, 14, 12, 13);
        for (b, f) in [(22, flags::OFFEN), (23, flags::IDXEN), (21, flags::TFE)] {
            if bit(w1, b) {
                i.flags |= f;
            }
        }
        if i.op.info().format == Format::Mubuf && bit(w, 16) {
            i.flags |= flags::LDS;
        }
        if i.flags & (flags::OFFEN | flags::IDXEN) != 0 {
            i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        }
        let vdata = Operand::Vgpr(bits(w1, 8, 8) as u16);
        if info.src[1] != Ty::None {
            i.src[1] = vdata;
        }
        returned_data(&mut i, vdata);
        if info.src[2] != Ty::None {
            i.src[2] = sreg_operand(bits(w1, 16, 5) * 4);
            i.src[3] = self.operand(bits(w1, 24, 8), Ty::B32, false)?;
        }
        Ok(i)
    }
}

/// The graphics formats: decoded to their full length (so the next word is
/// never misread), never run.
impl Reader<'_> {
    /// MIMG: two dwords, three with NSA (vaddr1..4, a byte each).
    fn mimg(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Mimg, bits(w, 18, 8), w)?);
        let nsa = bit(w, 0);
        if nsa {
            self.need(12)?;
            i.imm = self.word(8)? as i32;
        }
        let vdata = Operand::Vgpr(bits(w1, 8, 8) as u16);
        mimg::place_data(&mut i, vdata);
        i.src[0] = Operand::Vgpr(bits(w1, 0, 8) as u16);
        i.src[1] = sreg_operand(bits(w1, 16, 5) * 4);
        if mimg::has_sampler(i.op.name()) {
            i.src[2] = sreg_operand(bits(w1, 26, 5) * 4);
        }
        let field = |b: u32, f: u32| if bit(w, b) { f } else { 0 };
        i.aux = bits(w, 8, 4)
            | bits(w, 2, 3) << image::DIM_SHIFT
            | field(0, image::NSA)
            | field(7, image::UNORM)
            | field(15, image::R128)
            | field(16, image::A16)
            | field(17, image::D16)
            | if bit(w1, 22) { image::LWE } else { 0 };
        i.flags |= cache_flags(w, 14, 12, 13) | if bit(w1, 21) { flags::TFE } else { 0 };
        Ok(i)
    }

    /// EXP: two dwords; a source whose enable bit is clear is unused.
    fn exp(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Exp, 0, w)?);
        for (k, src) in i.src.iter_mut().enumerate() {
            if bit(w, k as u32) {
                *src = Operand::Vgpr(bits(w1, 8 * k as u32, 8) as u16);
            }
        }
        i.aux = bits(w, 4, 6);
        i.imm = (bits(w, 0, 4) | (bit(w, 11) as u32) << 4 | (bit(w, 13) as u32) << 5) as i32;
        Ok(i)
    }

    /// VINTERP: two dwords, like VOP3 with three VGPR sources.
    fn vinterp(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Vinterp, bits(w, 16, 7), w)?);
        i.dst[0] = Operand::Vgpr(bits(w, 0, 8) as u16);
        for k in 0..3 {
            self.src(&mut i, k, bits(w1, 9 * k as u32, 9), Ty::F32)?;
        }
        i.mods = Mods {
            neg: bits(w1, 29, 3) as u8,
            opsel: bits(w, 11, 4) as u8,
            clamp: bit(w, 15),
            ..Mods::default()
        };
        i.imm = bits(w, 8, 3) as i32;
        Ok(i)
    }

    /// LDSDIR: one dword.
    fn lds_direct(&mut self, w: u32) -> Result<Inst> {
        let mut i = blank(self.lookup(Format::LdsDirect, bits(w, 20, 2), w)?);
        i.dst[0] = Operand::Vgpr(bits(w, 0, 8) as u16);
        i.aux = bits(w, 10, 6) << 2 | bits(w, 8, 2);
        i.imm = bits(w, 16, 4) as i32;
        Ok(i)
    }
}

/// A vector-memory op's returned data: every load's, an atomic's only when
/// GLC asks for the old value (gfx12's decoder sets GLC from its
/// TH_ATOMIC_RETURN hint).
fn returned_data(i: &mut Inst, vdata: Operand) {
    let info = i.op.info();
    let returns = !info.implicit.has(Implicit::ATOMIC) || i.flags & flags::GLC != 0;
    if info.dst[0] != Ty::None && returns {
        i.dst[0] = vdata;
    }
}

/// SMEM's registers, where both families keep them: sdata (bits 6-12 of
/// the first word; an op without one, such as `s_atc_probe` or a gfx12
/// prefetch, keeps the field in `aux`), sbase (bits 0-5, in pairs) and
/// soffset (bits 25-31 of the second word).
fn smem_registers(i: &mut Inst, w: u32, w1: u32) {
    let info = i.op.info();
    if info.dst[0] != Ty::None {
        i.dst[0] = sreg_operand(bits(w, 6, 7));
    } else {
        i.aux = bits(w, 6, 7);
    }
    if info.src[0] != Ty::None {
        // A buffer resource is 4-aligned: the low bit of sbase is ignored.
        let align = if info.src[0] == Ty::B128 { !1 } else { !0 };
        i.src[0] = sreg_operand((bits(w, 0, 6) & align) * 2);
    }
    let soff = bits(w1, 25, 7);
    if soff != sreg::NULL as u32 && info.src[1] != Ty::None {
        i.src[1] = sreg_operand(soff);
    }
}

fn cache_flags(w: u32, glc: u32, slc: u32, dlc: u32) -> u16 {
    (if bit(w, glc) { flags::GLC } else { 0 })
        | (if bit(w, slc) { flags::SLC } else { 0 })
        | (if bit(w, dlc) { flags::DLC } else { 0 })
}
