//! gfx12 (RDNA4) words: the scalar, VALU, VOPD and DS encodings keep
//! gfx11's layouts (decoded by the shared readers with gfx12's opcode
//! lookups); SMEM moves its fields, and vector memory becomes the 96-bit
//! VFLAT/VSCRATCH/VGLOBAL and VBUFFER words with a temporal hint (`th`)
//! and scope instead of GLC/SLC/DLC. Their fields land in the same `Inst`
//! operands as gfx11's, so the executor reads one form.

use super::{
    bit, bits, blank, returned_data, sext, smem_registers, sreg_operand, unknown, Reader, Result,
};
use crate::mimg;
use crate::{flags, image, sreg, DecodeError, Format, Implicit, Inst, Operand, Ty};

/// A cache policy as `Inst::cache` holds it.
fn cache(th: u32, scope: u32) -> u8 {
    (th | scope << crate::cache::SCOPE_SHIFT) as u8
}

/// TH_ATOMIC_RETURN: an atomic returns the old value.
const TH_ATOMIC_RETURN: u32 = 1;

/// An atomic whose hint asks for the old value gets gfx11's GLC, which the
/// shared readers and the executor read as "returns".
fn atomic_return(i: &mut Inst, th: u32) {
    if i.op.has(Implicit::ATOMIC) && th & TH_ATOMIC_RETURN != 0 {
        i.flags |= flags::GLC;
    }
}

impl Reader<'_> {
    /// One gfx12 instruction whose first word is `w0`.
    pub(super) fn gfx12(&mut self, w0: u32) -> Result<Inst> {
        match w0 >> 26 {
            0b110101 => self.vop3(w0),
            0b110010 => self.vopd(w0),
            0b110011 if w0 >> 24 == 0xCC => self.vop3p(w0),
            // VINTERP's opcode is 5 bits here (gfx11's 7): llvm ignores 21-22.
            0b110011 if w0 >> 24 == 0xCD => self.vinterp(w0 & !(3 << 21)),
            0b110011 if w0 >> 24 == 0xCE => self.vdsdir(w0),
            0b111110 => self.exp(w0),
            0b110110 => self.ds(w0),
            0b111101 => self.smem12(w0),
            0b111011 => self.vmem12(w0),
            0b110001 => self.vbuffer12(w0),
            0b110100 => self.image12(w0, false),
            0b111001 => self.image12(w0, true),
            _ if w0 >> 31 == 0 => self.vop12c(w0),
            _ if w0 >> 30 == 0b10 => self.salu(w0),
            _ => Err(DecodeError::UnknownOpcode {
                format: "gfx12",
                opcode: w0 >> 26,
                word: w0,
            }),
        }
    }

    /// VDSDIR: gfx11's LDSDIR word plus `wait_vm_vsrc` (bit 23), kept
    /// in bit 4 of `imm` above `wait_va_vdst`.
    fn vdsdir(&mut self, w: u32) -> Result<Inst> {
        let mut i = self.lds_direct(w)?;
        i.imm |= (bits(w, 23, 1) << 4) as i32;
        Ok(i)
    }

    /// SMEM: op in bits 13-18, th 23-24 and scope 21-22 of the first word;
    /// a 24-bit signed offset and soffset in the second.
    fn smem12(&mut self, w: u32) -> Result<Inst> {
        self.need(8)?;
        let w1 = self.word(4)?;
        let mut i = blank(self.lookup(Format::Smem, bits(w, 13, 6), w)?);
        smem_registers(&mut i, w, w1);
        i.imm = sext(bits(w1, 0, 24), 24);
        i.cache = cache(bits(w, 23, 2), bits(w, 21, 2));
        Ok(i)
    }

    /// VFLAT (seg 0), VSCRATCH (1), VGLOBAL (2): saddr and op in the first
    /// word; vdst, th, scope and the data VGPR in the second; the address
    /// VGPR and a 24-bit signed offset in the third.
    fn vmem12(&mut self, w: u32) -> Result<Inst> {
        self.need(12)?;
        let (w1, w2) = (self.word(4)?, self.word(8)?);
        let fmt = match bits(w, 24, 2) {
            0 => Format::Flat,
            1 => Format::Scratch,
            2 => Format::Global,
            _ => return Err(unknown("VMEM", bits(w, 24, 2), w)),
        };
        let mut i = blank(self.lookup(fmt, bits(w, 14, 8), w)?);
        let info = i.op.info();
        i.imm = sext(bits(w2, 8, 24), 24);
        let th = bits(w1, 20, 3);
        i.cache = cache(th, bits(w1, 18, 2));
        let saddr = bits(w, 0, 7);
        let has_vaddr = info.src[0] != Ty::None && (fmt != Format::Scratch || bit(w1, 17));
        if fmt == Format::Scratch && bit(w1, 17) {
            i.flags |= flags::SVE;
        }
        if has_vaddr {
            i.src[0] = Operand::Vgpr(bits(w2, 0, 8) as u16);
        }
        if info.src[1] != Ty::None {
            i.src[1] = Operand::Vgpr(bits(w1, 23, 8) as u16);
        }
        if saddr != sreg::NULL as u32 && fmt != Format::Flat {
            i.src[2] = sreg_operand(saddr);
        }
        atomic_return(&mut i, th);
        returned_data(&mut i, Operand::Vgpr(bits(w1, 0, 8) as u16));
        Ok(i)
    }

    /// VBUFFER: soffset and op in the first word (the typed ops are 128 and
    /// up: bit 21 with a 4-bit op); vdata, the resource, th, scope, format,
    /// idxen and offen in the second; vaddr and a 24-bit offset in the
    /// third.
    fn vbuffer12(&mut self, w: u32) -> Result<Inst> {
        self.need(12)?;
        let (w1, w2) = (self.word(4)?, self.word(8)?);
        let op = bits(w, 14, 8);
        let (fmt, opc) = if op >= 128 {
            (Format::Mtbuf, op - 128)
        } else {
            (Format::Mubuf, op)
        };
        let mut i = blank(self.lookup(fmt, opc, w)?);
        let info = i.op.info();
        i.imm = sext(bits(w2, 8, 24), 24);
        let th = bits(w1, 20, 3);
        i.cache = cache(th, bits(w1, 18, 2));
        i.aux = bits(w1, 23, 7); // the data format
        for (b, f) in [(30, flags::OFFEN), (31, flags::IDXEN)] {
            if bit(w1, b) {
                i.flags |= f;
            }
        }
        if bit(w, 22) {
            i.flags |= flags::TFE;
        }
        if i.flags & (flags::OFFEN | flags::IDXEN) != 0 {
            i.src[0] = Operand::Vgpr(bits(w2, 0, 8) as u16);
        }
        let vdata = Operand::Vgpr(bits(w1, 0, 8) as u16);
        if info.src[1] != Ty::None {
            i.src[1] = vdata;
        }
        atomic_return(&mut i, th);
        returned_data(&mut i, vdata);
        if info.src[2] != Ty::None {
            i.src[2] = sreg_operand(bits(w1, 9, 9));
            i.src[3] = self.operand(bits(w, 0, 7), Ty::B32, false)?;
        }
        Ok(i)
    }

    /// VIMAGE (`sample` false) and VSAMPLE: 96 bits, always a list of
    /// address VGPRs (vaddr0-3 in the third word; VIMAGE's vaddr4 in the
    /// top byte of the second, where VSAMPLE has ssamp). The first word
    /// holds dim, r128, d16, a16, op and dmask (VSAMPLE: also tfe and
    /// unorm); the second vdata, srsrc, scope, th and VIMAGE's tfe or
    /// VSAMPLE's lwe. Kept as gfx11's MIMG operands (`Inst::imm` the
    /// vaddr1-4 bytes, NSA set); VSAMPLE's opcodes are 256 up.
    fn image12(&mut self, w: u32, sample: bool) -> Result<Inst> {
        self.need(12)?;
        let (w1, w2) = (self.word(4)?, self.word(8)?);
        let opcode = bits(w, 14, 8) + if sample { 256 } else { 0 };
        let mut i = blank(self.lookup(Format::Mimg, opcode, w)?);
        let vdata = Operand::Vgpr(bits(w1, 0, 8) as u16);
        mimg::place_data(&mut i, vdata);
        i.src[0] = Operand::Vgpr(bits(w2, 0, 8) as u16);
        let vaddr4 = if sample { 0 } else { bits(w1, 24, 8) };
        i.imm = (w2 >> 8 | vaddr4 << 24) as i32;
        i.src[1] = sreg_operand(bits(w1, 9, 9));
        if sample {
            i.src[2] = sreg_operand(bits(w1, 23, 9));
        }
        let field = |on: bool, f: u32| if on { f } else { 0 };
        i.aux = bits(w, 22, 4)
            | bits(w, 0, 3) << image::DIM_SHIFT
            | image::NSA
            | field(bit(w, 4), image::R128)
            | field(bit(w, 5), image::D16)
            | field(bit(w, 6), image::A16)
            | field(sample && bit(w, 13), image::UNORM)
            | field(sample && bit(w1, 8), image::LWE);
        let tfe = if sample { bit(w, 3) } else { bit(w1, 23) };
        if tfe {
            i.flags |= flags::TFE;
        }
        let th = bits(w1, 20, 3);
        i.cache = cache(th, bits(w1, 18, 2));
        atomic_return(&mut i, th);
        Ok(i)
    }
}
